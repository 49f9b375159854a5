// S3 error model: every failure a handler raises is an S3Error so the server can
// render it as S3 error XML with the status S3 itself would use.

export class S3Error extends Error {
  constructor(
    public readonly code: string,
    message: string,
    public readonly status: number,
    /** Extra elements S3 puts in the error document (e.g. BucketName, Key). */
    public readonly extra: Record<string, string> = {},
    public readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const Errors = {
  accessDenied: (message = "Access Denied", extra: Record<string, string> = {}) =>
    new S3Error("AccessDenied", message, 403, extra),
  noSuchBucket: (bucket: string) =>
    new S3Error("NoSuchBucket", "The specified bucket does not exist", 404, { BucketName: bucket }),
  noSuchKey: (key: string) => new S3Error("NoSuchKey", "The specified key does not exist.", 404, { Key: key }),
  noSuchUpload: (uploadId: string) =>
    new S3Error(
      "NoSuchUpload",
      "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
      404,
      { UploadId: uploadId },
    ),
  invalidArgument: (message: string, name?: string, value?: string) =>
    new S3Error(
      "InvalidArgument",
      message,
      400,
      name === undefined ? {} : { ArgumentName: name, ArgumentValue: value ?? "" },
    ),
  invalidRequest: (message: string) => new S3Error("InvalidRequest", message, 400),
  malformedXML: () =>
    new S3Error(
      "MalformedXML",
      "The XML you provided was not well-formed or did not validate against our published schema",
      400,
    ),
  notImplemented: (what = "A header you provided implies functionality that is not implemented") =>
    new S3Error("NotImplemented", what, 501),
  invalidTag: (message: string) => new S3Error("InvalidTag", message, 400),
  badDigest: (message = "The Content-MD5 you specified did not match what we received.") =>
    new S3Error("BadDigest", message, 400),
  preconditionFailed: (condition: string) =>
    new S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold", 412, {
      Condition: condition,
    }),
  incompleteBody: () =>
    new S3Error("IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header", 400),
  entityTooLarge: (max: number) =>
    new S3Error("EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", 400, {
      MaxSizeAllowed: String(max),
    }),
};
