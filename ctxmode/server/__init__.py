"""`ctxmode serve`: the ctx_* MCP tools over stdio. The only place the MCP SDK is imported."""
