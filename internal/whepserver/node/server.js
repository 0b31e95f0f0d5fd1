// WHEP endpoint for the tests of internal/whepserver: meetecho's
// janus-whep-server, talking to a Janus instance over its WebSocket API,
// exposing one Streaming-plugin mountpoint as one WHEP endpoint.
//
// Configuration comes from the environment, set by whepserver.Start:
//   JANUS_WS    ws:// URL of Janus's WebSocket transport (required)
//   MOUNTPOINT  numeric Streaming mountpoint ID (required)
//   ENDPOINT    endpoint ID, the last path element of the WHEP URL (required)
//   WHEP_TOKEN  bearer token the endpoint requires (optional)
//
// The HTTP server listens on 127.0.0.1 on a port the kernel picks: the
// library's own server would bind every interface, so we hand it an
// Express app instead and listen ourselves. Once listening, one line
//   WHEP-READY http://127.0.0.1:PORT/whep/endpoint/ID
// goes to stdout; Go waits for it, which avoids a port race.
//
// The process exits when stdin closes, so that it dies with its Go parent
// even if the parent is killed before it can clean up.

import http from 'node:http';
import express from 'express';
import { JanusWhepServer } from 'janus-whep-server';

function need(name) {
	const v = process.env[name];
	if (!v) {
		console.error(`whepserver: ${name} not set`);
		process.exit(2);
	}
	return v;
}

const janusURL = need('JANUS_WS');
const mountpoint = Number(need('MOUNTPOINT'));
const endpointID = need('ENDPOINT');
const token = process.env.WHEP_TOKEN || undefined;
const basePath = '/whep';

process.on('unhandledRejection', (err) => {
	console.error('whepserver: unhandled rejection:', err);
	process.exit(1);
});
process.on('SIGTERM', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

const app = express();
const whep = new JanusWhepServer({
	janus: { address: janusURL },
	rest: { app, basePath },
	debug: 'verb',
});
await whep.start();
whep.createEndpoint({ id: endpointID, mountpoint, token });

const server = http.createServer(app);
server.listen(0, '127.0.0.1', () => {
	const { port } = server.address();
	console.log(`WHEP-READY http://127.0.0.1:${port}${basePath}/endpoint/${endpointID}`);
});
