# The path arrives in the environment, so nothing in it is ever expanded or run.
FILE_CONTENT_PATH=$CTXMODE_FILE_PATH
file_path=$FILE_CONTENT_PATH
FILE_CONTENT=$(cat -- "$FILE_CONTENT_PATH")
