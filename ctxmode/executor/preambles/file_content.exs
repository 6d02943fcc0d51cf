file_content_path = System.fetch_env!("CTXMODE_FILE_PATH")
file_path = file_content_path
file_content = File.read!(file_content_path)
