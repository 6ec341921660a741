package work

// termClass is a terminal Work's class, kept in one byte of the item.
type termClass uint8

const (
	classNone termClass = iota
	classError
	classPanic
	classDeadline
	classResultTooLarge
	classBudgetExhausted
	classCancelled
	classDenied
	classApprovalTimeout
)

var termClassNames = [...]string{classNone: "", classError: ClassError, classPanic: ClassPanic,
	classDeadline: ClassDeadline, classResultTooLarge: ClassResultTooLarge,
	classBudgetExhausted: ClassBudgetExhausted, classCancelled: ClassCancelled,
	classDenied: ClassDenied, classApprovalTimeout: ClassApprovalTimeout}

func (c termClass) String() string {
	if int(c) >= len(termClassNames) {
		return jobClassName(c) // a failed job's own class (jobpoll.go)
	}
	return termClassNames[c]
}

// classOf returns the termClass of class, one of the classes settle
// assigns (classNone for any other).
func classOf(class string) termClass {
	switch class {
	case ClassError:
		return classError
	case ClassPanic:
		return classPanic
	case ClassDeadline:
		return classDeadline
	case ClassResultTooLarge:
		return classResultTooLarge
	case ClassBudgetExhausted:
		return classBudgetExhausted
	case ClassCancelled:
		return classCancelled
	case ClassDenied:
		return classDenied
	case ClassApprovalTimeout:
		return classApprovalTimeout
	}
	return classNone
}
