FILE_CONTENT_PATH <- Sys.getenv("CTXMODE_FILE_PATH")
file_path <- FILE_CONTENT_PATH
FILE_CONTENT <- paste(readLines(FILE_CONTENT_PATH, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
