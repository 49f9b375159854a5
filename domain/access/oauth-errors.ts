/**
 * A refusal in OAuth's own shape (RFC 6749 section 5.2, RFC 7591 section 3.2.2): the token and
 * registration endpoints answer `{ error, error_description }`, which OAuth clients parse,
 * instead of the service's error envelope.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

/**
 * A refusal of an authorization request whose client and redirect URI were verified: it goes
 * back to the client at its redirect URI (RFC 6749 section 4.1.2.1), not to the person.
 */
export class OAuthRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
  }
}
