package daemon

import "time"

// DefaultRetryMin is the first wait before a failed cycle is tried again.
const DefaultRetryMin = time.Minute

// ended records how a cycle of j ended: after a failure the job is tried
// again after retryMin, doubling with each failure in a row up to the
// interval of its schedule, so a cause an operator fixes (a lock file, a
// device) clears without a manual tune and without waiting hours for the
// next scheduled cycle. Any other end resets the backoff.
func (s *scheduler) ended(j *job, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state != "failed" {
		j.failures = 0
		j.stopRetry()
		return
	}
	j.failures++
	if s.ctx == nil || s.ctx.Err() != nil || j.entry == 0 {
		return
	}
	wait := s.retryWait(j)
	id := j.key.String()
	j.stopRetry()
	j.retryAt = s.now().Add(wait)
	j.retry = time.AfterFunc(wait, func() {
		s.trigger(id, runRequest{trigger: "retry"}) // an error means the job went away or the daemon stops
	})
	s.log.Info().Str("job_id", id).Int("failures", j.failures).Str("retry_in", wait.String()).Msg("failed cycle to be tried again")
}

// retryWait is retryMin doubled for each failure after the first, at most
// the time between two runs of j's schedule. Called with s.mu held.
func (s *scheduler) retryWait(j *job) time.Duration {
	base := s.retryMin
	if base <= 0 {
		base = DefaultRetryMin
	}
	limit := 6 * time.Hour
	if e := s.cron.Entry(j.entry); e.Schedule != nil {
		next := e.Schedule.Next(s.now())
		if d := e.Schedule.Next(next).Sub(next); d > 0 {
			limit = d
		}
	}
	wait := base
	for i := 1; i < j.failures && wait < limit; i++ {
		wait *= 2
	}
	return min(wait, max(limit, base))
}

// retryTime is when j's failed cycle is tried again; nil when no retry is
// due.
func (s *scheduler) retryTime(j *job) *time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.retry == nil {
		return nil
	}
	t := j.retryAt
	return &t
}

// stopRetry cancels j's pending retry. Called with scheduler.mu held.
func (j *job) stopRetry() {
	if j.retry != nil {
		j.retry.Stop()
		j.retry, j.retryAt = nil, time.Time{}
	}
}

// now is the scheduler's clock.
func (s *scheduler) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}
