const FILE_CONTENT_PATH = process.env.CTXMODE_FILE_PATH;
const file_path = FILE_CONTENT_PATH;
const FILE_CONTENT = require("node:fs").readFileSync(FILE_CONTENT_PATH, "utf8");
