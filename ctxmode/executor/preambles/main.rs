#[allow(unused_variables)]
fn main() {
    //CTXMODE_FILE_CONTENT
    //CTXMODE_USER_CODE
}
