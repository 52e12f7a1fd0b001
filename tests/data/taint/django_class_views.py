# Engine probe: a Django class-based view's instance holds its request and its route's
# arguments (View.setup()); a bound form's cleaned data and a serializer's validated data are
# what the client sent; the framework passes form_valid() and perform_create() such a form or
# serializer.
import os
import subprocess

from django import forms
from django.db import connection
from django.http import HttpResponse
from django.views import View
from django.views.generic import DetailView
from django.views.generic.edit import FormView
from rest_framework import generics, serializers, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView


class LookupForm(forms.Form):
    term = forms.CharField()


class NoteSerializer(serializers.Serializer):
    title = serializers.CharField()


class Echo(View):
    def get(self, request, *args, **kwargs):
        return HttpResponse("<p>%s</p>" % self.request.GET.get("q"))  # $ xss

    def fixed(self):
        return HttpResponse("<p>%s</p>" % self.template_name)  # ok xss


class Detail(DetailView):
    def get_object(self, queryset=None):
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM notes WHERE id = %s" % self.kwargs["pk"])  # $ sql
            cursor.execute("SELECT * FROM notes WHERE id = %s", [self.kwargs["pk"]])  # ok sql
            return cursor.fetchone()


def search(request):
    form = LookupForm(request.POST)
    if form.is_valid():
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM notes WHERE t = '%s'" % form.cleaned_data["term"])  # $ sql
    return HttpResponse("ok")


class Lookup(FormView):
    form_class = LookupForm

    def form_valid(self, form):
        subprocess.run("grep -r " + form.cleaned_data["term"] + " /srv", shell=True)  # $ command
        subprocess.run(["grep", "-r", "--", form.cleaned_data["term"], "/srv"])  # ok command
        return super().form_valid(form)


class Notes(APIView):
    def post(self, request):
        serializer = NoteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        os.system("touch " + serializer.validated_data["title"])  # $ command
        return Response({})


class NoteSet(viewsets.ModelViewSet):
    def perform_create(self, serializer):
        os.system("touch " + serializer.validated_data["title"])  # $ command


class NoteList(generics.ListAPIView):
    def get_queryset(self):
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM notes WHERE t = '%s'" % self.request.query_params.get("t"))  # $ sql
        return []


class NoteCreate(generics.CreateAPIView):
    def perform_create(self, serializer):
        os.system("touch " + serializer.validated_data["title"])  # $ command
