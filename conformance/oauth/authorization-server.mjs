// A real OAuth 2.1 authorization server for scripts/oauth-check: oidc-provider
// (pinned in package.json), issuing RFC 9068 JWT access tokens with resource
// indicators (RFC 8707) through the client credentials grant.
//
//   node authorization-server.mjs PORT
//
// Issuer http://127.0.0.1:PORT. Its signing key is generated at each start.
// Clients: "writer" (may ask for desk.write) and "reader" (may ask for no
// scope), secrets "writer-secret" and "reader-secret"; "desk-rs" may
// introspect. Any resource indicator of the form http://127.0.0.1:N/mcp or
// http://localhost:N/mcp is a resource server whose scope is desk.write;
// tokens for it name it as their audience. Prints "issuer <url>" on stdout once listening.
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node authorization-server.mjs PORT');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = { ...privateKey.export({ format: 'jwk' }), kid: 'oauth-check-1', alg: 'RS256', use: 'sig' };
// http://127.0.0.1:N/mcp gets JWT access tokens; http://localhost:N/mcp
// opaque ones, which only introspection (RFC 7662) can check.
const RESOURCE = /^http:\/\/(127\.0\.0\.1|localhost):\d+\/mcp$/;

const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  ...(scope === undefined ? {} : { scope }),
});

const provider = new Provider(issuer, {
  jwks: { keys: [signing] },
  clients: [client('writer', 'desk.write'), client('reader'), client('desk-rs')],
  scopes: ['desk.write'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!RESOURCE.test(resource)) {
          throw new errors.InvalidTarget(`unknown resource ${resource}`);
        }
        return {
          scope: 'desk.write',
          audience: resource,
          accessTokenTTL: 300,
          ...(resource.startsWith('http://localhost:')
            ? { accessTokenFormat: 'opaque' }
            : { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
        };
      },
    },
  },
});
provider.proxy = false;
provider.on('server_error', (ctx, error) => console.error('server_error', error));

provider.listen(port, '127.0.0.1', () => {
  console.log(`issuer ${issuer}`);
});
