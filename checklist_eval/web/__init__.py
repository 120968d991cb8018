"""``checklist-eval serve``: the author's upload page and the organizer's browser over a results folder,
on Starlette and uvicorn (the ``[web]`` extra). ``app.make_app`` builds the ASGI application."""
