"""Small private helpers the stages share: warnings, fingerprints, redaction, the environment, SQLite, text."""
