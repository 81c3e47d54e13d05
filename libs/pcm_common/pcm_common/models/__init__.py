"""Model gateway: every model call goes through litellm."""
