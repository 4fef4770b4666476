-- Each pull request's heads as the bot saw them, in order: a command acts only on the head its author saw.
CREATE TABLE pull_heads (
    seq BIGSERIAL PRIMARY KEY,
    key TEXT NOT NULL,
    sha TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX pull_heads_by_key ON pull_heads (key, seq);
