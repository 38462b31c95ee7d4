"""The koikoi/1 wire (referee.protocol): models, schema, the fast paths, and bad input fuzzed."""
