// Renders /api/v1/openapi.json with Swagger UI. A file of its own rather than an inline
// script, so the page's Content-Security-Policy can keep script-src to this origin alone.
// Every URL is relative to the page (/docs), so the page works under a path prefix too
// (PUBLIC_BASE_URL=/syndication, behind a proxy that keeps or strips it).
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: 'api/v1/openapi.json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  deepLinking: true,
  docExpansion: 'list',
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  // The default would load a badge from validator.swagger.io: no third-party requests.
  validatorUrl: null,
  tryItOutEnabled: false,
});
