/**
 * The close codes a Realtime session ends with (README "Realtime", openapi/openapi.yaml `/v1/realtime`). The
 * 1xxx ones are RFC 6455's; the 4xxx ones are the gateway's own (the range RFC 6455 leaves to applications).
 * Every close that is not the client's own carries a reason text, and most follow an `error` event naming the
 * error code.
 */
export const CLOSE = {
  /** Closed normally (the client closed, or the session ended after the client left). */
  normal: 1000,
  /** The gateway is shutting down: what was used is settled first. */
  goingAway: 1001,
  /** A binary frame: the Realtime API speaks JSON text events (audio travels base64 inside them). */
  unsupportedData: 1003,
  /** A text frame that is not a JSON object with a string `type`. */
  invalidPayload: 1007,
  /** A frame over REALTIME_MAX_FRAME_BYTES. */
  tooBig: 1009,
  /** The gateway failed (a store it cannot reach: nothing more is relayed unpaid). */
  internalError: 1011,
  /** The provider closed or dropped its socket, or could not be reached: settled from what arrived. */
  badGateway: 1014,
  /** The client sent nothing for REALTIME_IDLE_TIMEOUT_MS. */
  idle: 4000,
  /** The session lasted REALTIME_MAX_SESSION_MS. */
  maxDuration: 4001,
  /** The balance cannot cover the next response or the audio appended (`insufficient_balance`). */
  insufficientBalance: 4402,
  /**
   * A reader (client or provider) stayed over REALTIME_MAX_BUFFERED_BYTES for REALTIME_SLOW_READER_MS, or a
   * client sent on past twice that bound while paused (uWS cannot stop reading it).
   */
  slowReader: 4008,
} as const;
