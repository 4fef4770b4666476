"""The service's edge: the webhook app, the settings it reads from its environment and its JSON logs.
The top of the service: imports the worker, the stores and everything below them."""
