-- What a platform run's report artifact said (the contract probe's findings), kept with its dispatch (JSON).
ALTER TABLE validation_dispatches ADD COLUMN IF NOT EXISTS report TEXT;
