import { readFileSync as __ctxmodeReadFileSync } from "node:fs";
const FILE_CONTENT_PATH = process.env.CTXMODE_FILE_PATH;
const file_path = FILE_CONTENT_PATH;
const FILE_CONTENT = __ctxmodeReadFileSync(FILE_CONTENT_PATH, "utf8");
