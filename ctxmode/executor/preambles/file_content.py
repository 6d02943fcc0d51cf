import os as _ctxmode_os

FILE_CONTENT_PATH = _ctxmode_os.environ["CTXMODE_FILE_PATH"]
file_path = FILE_CONTENT_PATH
with open(FILE_CONTENT_PATH, encoding="utf-8", errors="replace") as _ctxmode_handle:
    FILE_CONTENT = _ctxmode_handle.read()
