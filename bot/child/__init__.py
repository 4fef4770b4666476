"""One analysis in a child process held to an address-space and a wall-time limit, and the step it is
on. Imports only bot.model."""
