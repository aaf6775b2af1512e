"""``card-envs play``: a local web app to play any game in the browser against any agent,
watch agents play, and step through game records (the ``play`` extra: Starlette, uvicorn)."""
