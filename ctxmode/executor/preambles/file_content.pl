our $FILE_CONTENT_PATH = $ENV{CTXMODE_FILE_PATH};
our $file_path = $FILE_CONTENT_PATH;
our $FILE_CONTENT = do {
    local $/;
    open(my $ctxmode_fh, '<:encoding(UTF-8)', $FILE_CONTENT_PATH) or die "cannot read $FILE_CONTENT_PATH: $!";
    <$ctxmode_fh>;
};
