"""The stores: the job queue (SQLite under the data dir, or PostgreSQL with `DATABASE_URL`, its schema in
`migrations/`) and the validation dispatches. Imports bot.decisions and below."""
