package main

import (
	"time"

	"github.com/agentwork/agentwork/work"
)

// fastClock is a work.Clock that runs speed times faster than real time
// from the moment it is made: ages and timestamps grow speed times faster,
// and AfterFunc waits d/speed of real time.
type fastClock struct {
	base  time.Time
	speed float64
}

func newFastClock(speed float64) work.Clock {
	return fastClock{base: time.Now(), speed: speed}
}

func (c fastClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base)) * c.speed))
}

func (c fastClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(time.Duration(float64(d)/c.speed), f).Stop
}
