-- The bump branches the bot made in each repository, with the commit it last set each to: it moves or
-- deletes only a branch whose head is still that commit, never one a person made or moved.
CREATE TABLE bump_branches (
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,
    sha TEXT NOT NULL,
    made_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, branch)
);
