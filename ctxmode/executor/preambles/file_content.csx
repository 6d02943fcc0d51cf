var FILE_CONTENT_PATH = System.Environment.GetEnvironmentVariable("CTXMODE_FILE_PATH");
var file_path = FILE_CONTENT_PATH;
var FILE_CONTENT = System.IO.File.ReadAllText(FILE_CONTENT_PATH);
