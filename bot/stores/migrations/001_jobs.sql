-- The job queue, the delivery ids seen, and the platform dispatches waiting for their workflow runs.
CREATE TABLE jobs (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'superseded')),
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires DOUBLE PRECISION,
    progress TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    delivery_id TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    retry_at DOUBLE PRECISION,
    retries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_status_key ON jobs (status, key);
CREATE INDEX jobs_by_key ON jobs (key, status);

CREATE TABLE deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    received_at DOUBLE PRECISION NOT NULL
);

CREATE TABLE validation_dispatches (
    seq BIGSERIAL,
    repo TEXT NOT NULL,
    pr INTEGER NOT NULL,
    platform TEXT NOT NULL,
    workflow TEXT NOT NULL,
    ref TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    request_id TEXT PRIMARY KEY,
    dispatched_at TEXT NOT NULL,
    check_run_id BIGINT,
    run_id BIGINT,
    run_url TEXT,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'in_progress', 'completed')),
    conclusion TEXT,
    started_at TEXT,
    completed_at TEXT
);
CREATE INDEX validation_by_repo_status ON validation_dispatches (repo, status);
CREATE INDEX validation_by_pr ON validation_dispatches (repo, pr);
CREATE INDEX validation_by_run ON validation_dispatches (repo, run_id);
