package a

import "errors"

func f() (int, error) { return 0, errors.New("f") }

func use(int) {}

func lostError(retry bool) error {
	_, err := f()
	if retry {
		x, err := f() // want `declaration of "err" shadows the one at line 10, which is read at line 16`
		use(x)
		_ = err
	}
	return err
}

func lostInVar(retry bool) error {
	var err error
	if retry {
		var err = errors.New("retry") // want `declaration of "err" shadows`
		_ = err
	}
	return err
}

// The idiom: the outer err is assigned again before it is read.
func idiom() error {
	_, err := f()
	if err != nil {
		return err
	}
	if _, err := f(); err != nil {
		return err
	}
	_, err = f()
	return err
}

// A redeclaring := assigns the outer variable too.
func redeclared() error {
	_, err := f()
	if true {
		_, err := f()
		_ = err
	}
	y, err := f()
	use(y)
	return err
}

// Not read after the inner scope.
func notReadAfter() {
	_, err := f()
	_ = err
	{
		_, err := f()
		_ = err
	}
}

// The inner scope returns.
func innerReturns(done chan struct{}) error {
	_, err := f()
	select {
	case <-done:
		err := errors.New("done")
		return err
	default:
	}
	return err
}

// The inner scope panics.
func innerPanics(bad bool) error {
	_, err := f()
	if bad {
		_, err := f()
		panic(err)
	}
	return err
}

// Another type is another thing.
func otherType() int {
	n := 1
	{
		n := "one"
		_ = n
	}
	return n
}

// A deliberate copy.
func copies() int {
	n := 1
	{
		n := n
		n++
		_ = n
	}
	return n
}

// A closure keeps its own variable.
func closure() error {
	_, err := f()
	go func() {
		_, err := f()
		_ = err
	}()
	return err
}

// A closure that declares both is checked.
func insideClosure() func() error {
	return func() error {
		_, err := f()
		if true {
			_, err := f() // want `declaration of "err" shadows`
			_ = err
		}
		return err
	}
}

// A range variable meant to leave the last index behind.
func rangeVar(xs []int) int {
	i := -1
	for i := range xs { // want `declaration of "i" shadows`
		_ = i
	}
	return i
}

// A bare return reads a named result.
func namedResult(retry bool) (err error) {
	if retry {
		_, err := f() // want `declaration of "err" shadows`
		_ = err
	}
	return
}

// A bare return of a closure does not read its caller's results.
func namedResultClosure() (err error) {
	_, err = f()
	{
		_, err := f()
		_ = err
	}
	func() (n int) {
		return
	}()
	err = nil
	return
}
