package main

import (
	"fmt"
	"os"
)

var _ = fmt.Sprint
var _ = os.Getenv

func main() {
	//CTXMODE_FILE_CONTENT
	//CTXMODE_USER_CODE
}
