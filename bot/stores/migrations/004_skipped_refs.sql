-- The upstream refs a person with write access asked scheduled bumps to leave out (`/llama skip`).
CREATE TABLE skipped_refs (
    repo TEXT NOT NULL,
    pin TEXT NOT NULL,
    ref TEXT NOT NULL,
    skipped_by TEXT NOT NULL,
    skipped_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, pin, ref)
);
