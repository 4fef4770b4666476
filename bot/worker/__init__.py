"""The job runner and one module per kind of job: analysis, commands, regeneration, platform validation."""
