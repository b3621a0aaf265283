/**
 * The sign-in page of a console with an access token: a plain form (no script, so the strict
 * Content-Security-Policy holds) that posts the token once; the server answers with the session
 * cookie and never puts the token in a URL or a page.
 */
export function loginPage(failed: boolean, retryAfterS?: number): string {
  const notice =
    retryAfterS !== undefined
      ? `<p role="alert">Too many wrong tokens from your address: try again in ${retryAfterS} s.</p>`
      : failed
        ? '<p role="alert">That token is not this console\'s access token.</p>'
        : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in: Baton console</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<main>
<h1>Baton console</h1>
<form method="post" action="/login">
<p><label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus></p>
${notice}
<p><button type="submit">Sign in</button></p>
</form>
</main>
</body>
</html>
`;
}
