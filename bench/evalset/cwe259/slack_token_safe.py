from slack_sdk import WebClient

token_type = "bearer"
client = WebClient()
