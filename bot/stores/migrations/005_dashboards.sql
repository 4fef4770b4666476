-- The pin dashboard issue of each repository, and the newest refs its last refresh showed (pin -> ref, JSON).
CREATE TABLE dashboards (
    repo TEXT PRIMARY KEY,
    issue INTEGER NOT NULL,
    newest TEXT NOT NULL,
    refreshed_at DOUBLE PRECISION NOT NULL
);
