-- A job store written by llama-bot before jobs could wait to be retried (no retry_at, no retries).
-- Made by that version's SqliteJobQueue: job 1 done, 2 failed, 3 running when the service was
-- killed (lease expired at 1700000060), 4 queued. Rebuilt with sqlite3's executescript.
BEGIN TRANSACTION;
CREATE TABLE deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    received_at REAL NOT NULL
);
INSERT INTO "deliveries" VALUES('d-1','pull_request',1700000000.0);
INSERT INTO "deliveries" VALUES('d-2','pull_request',1700000000.0);
INSERT INTO "deliveries" VALUES('d-3','pull_request',1700000000.0);
INSERT INTO "deliveries" VALUES('d-4','pull_request',1700000000.0);
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'superseded')),
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires REAL,
    progress TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    delivery_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
INSERT INTO "jobs" VALUES(1,'analysis','ollama/ollama#1','{"installation_id": 1, "owner": "ollama", "repo": "ollama", "number": 1, "head_sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "reason": "pull_request.opened"}','done',1,NULL,NULL,'{}',NULL,'d-1',1700000000.0,1700000000.0);
INSERT INTO "jobs" VALUES(2,'analysis','ollama/ollama#2','{"installation_id": 1, "owner": "ollama", "repo": "ollama", "number": 2, "head_sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "reason": "pull_request.opened"}','failed',1,NULL,NULL,'{}','GitHub answered 502 Bad Gateway','d-2',1700000000.0,1700000000.0);
INSERT INTO "jobs" VALUES(3,'analysis','ollama/ollama#3','{"installation_id": 1, "owner": "ollama", "repo": "ollama", "number": 3, "head_sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "reason": "pull_request.opened"}','running',1,'old-host:1:1',1700000060.0,'{"comment_id": 1001}',NULL,'d-3',1700000000.0,1700000000.0);
INSERT INTO "jobs" VALUES(4,'analysis','ollama/ollama#4','{"installation_id": 1, "owner": "ollama", "repo": "ollama", "number": 4, "head_sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "reason": "pull_request.opened"}','queued',0,NULL,NULL,'{}',NULL,'d-4',1700000000.0,1700000000.0);
CREATE INDEX jobs_by_status_key ON jobs (status, key);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('jobs',4);
COMMIT;
