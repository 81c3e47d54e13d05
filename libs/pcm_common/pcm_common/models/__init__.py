"""Model gateway: every model call goes through litellm, imported by `gateway` alone."""
