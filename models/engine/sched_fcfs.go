package engine

// fcfs is vLLM's default scheduling policy (SchedulingPolicy.FCFS,
// vllm/v1/core/sched/request_queue.py, FCFSRequestQueue): sequences are
// admitted in arrival order, a preempted one goes back to the head of the
// waiting queue (prepend_request), and the victim is the last admitted
// (vllm/v1/core/sched/scheduler.py, schedule: self.running.pop()).
type fcfs struct{}

func (fcfs) enqueue(q *deque, s *Seq) { q.pushBack(s) }
func (fcfs) requeue(q *deque, s *Seq) { q.pushFront(s) }
func (fcfs) ordersRunning() bool      { return false }
