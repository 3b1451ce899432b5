"""The memory's text: turns cut into chunks, what a memory is searched by, conversation files, word search."""
