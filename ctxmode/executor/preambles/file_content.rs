    let file_content_path = std::env::var("CTXMODE_FILE_PATH").expect("CTXMODE_FILE_PATH");
    let file_path = file_content_path.clone();
    let file_content = std::fs::read_to_string(&file_content_path).expect("cannot read the file");
