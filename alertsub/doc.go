// Package alertsub hands physd's structural-health alerts to an action:
// a durable JetStream pull consumer on the stream physd publishes to
// (PHYSD_ESTIMATES, subjects physd.<camera>.alert and
// physd.<camera>.<zone>.alert) runs a command with the alert's JSON on
// stdin, or POSTs it to a webhook, and acknowledges the message only after
// the action succeeded.
//
// Delivery:
//
//   - One alert at a time (MaxAckPending 1), in stream order, so a
//     camera's "cleared" never overtakes its "raised".
//   - A failed action is retried: the message is negatively acknowledged
//     with the next delay of Config.Backoff and redelivered by the server,
//     so retries survive a restart of the subscriber. After
//     Config.MaxDeliver failed attempts the message is published to the
//     dead-letter subject (with headers naming the original subject, the
//     stream sequence, the attempts and the last error) and terminated.
//     A message that is not a valid alert goes there at once.
//   - Deduplication: each alert's id (its Nats-Msg-Id, which the daemon
//     derives from the camera, the state and the window) is recorded in a
//     JetStream key-value bucket once its action succeeded, before the
//     acknowledgement. A redelivered or re-published alert whose id is
//     recorded is acknowledged without running the action again.
//
// The one window left: if the subscriber dies after the action succeeded
// and before the id was recorded (one key-value write), the alert is
// redelivered and the action runs again. The action sees
// PHYSD_ALERT_ATTEMPT (and the header X-Physd-Alert-Attempt) above 1 then,
// and PHYSD_ALERT_ID, which stays the same: an action that must never
// repeat keys on that id.
package alertsub
