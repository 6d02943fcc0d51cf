	FILE_CONTENT_PATH := os.Getenv("CTXMODE_FILE_PATH")
	file_path := FILE_CONTENT_PATH
	_fileBytes, _fileErr := os.ReadFile(FILE_CONTENT_PATH)
	if _fileErr != nil {
		fmt.Fprintln(os.Stderr, _fileErr)
		os.Exit(1)
	}
	FILE_CONTENT := string(_fileBytes)
	_, _ = file_path, FILE_CONTENT
