package runtime

import "os"

func userHome() (string, error) { return os.UserHomeDir() }
