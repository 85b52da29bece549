/**
 * github-webhook's timeout, in seconds: serverless.yml sets the function's `timeout` to this
 * (test/infra/template.test.ts holds the two together). GitHub itself waits 10 s for an answer
 * before it marks a delivery failed (docs/reference/github.md).
 */
export const WEBHOOK_TIMEOUT_SECONDS = 10;

/** Allowance for clock skew between the invocations that compare claim times. */
const CLOCK_SKEW_SECONDS = 5;

/**
 * How long a delivery claim is held before a GitHub redelivery, or the sweep, may publish the
 * delivery in the holder's place. Lambda stops the holder at its timeout, so past this the holder
 * is dead and its claim is only a marker. The one definition, for the webhook and the sweep.
 */
export const DELIVERY_CLAIM_LEASE_SECONDS = WEBHOOK_TIMEOUT_SECONDS + CLOCK_SKEW_SECONDS;
