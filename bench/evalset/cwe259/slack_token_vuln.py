from slack_sdk import WebClient

auth_token = "xoxb-2048-4096-Zm9vYmFyYmF6cXV4"
client = WebClient(token=auth_token)
