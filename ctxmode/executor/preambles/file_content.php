<?php
$FILE_CONTENT_PATH = getenv("CTXMODE_FILE_PATH");
$file_path = $FILE_CONTENT_PATH;
$FILE_CONTENT = file_get_contents($FILE_CONTENT_PATH);
