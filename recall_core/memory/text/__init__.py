"""The memory's text: turns cut into chunks, what a memory is searched by, conversation files and their ingestion, word search, a reply's markdown read as plain text."""
