'use strict';

const jwt = require('jsonwebtoken');
const config = require('../config');

class AuthError extends Error {
  constructor(message, status = 401) {
    super(message);
    this.name = 'AuthError';
    this.status = status;
    this.code = status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN';
  }
}

function extractBearerToken(header) {
  if (!header) return null;
  const [scheme, token] = header.split(' ');
  if (!scheme || scheme.toLowerCase() !== 'bearer' || !token) return null;
  return token.trim();
}

/**
 * Express middleware that verifies the bearer token of a request and puts
 * the decoded user on req.user. Rejects the request with 401 otherwise.
 */
function requireAuth(req, res, next) {
  const token = extractBearerToken(req.headers.authorization);
  if (!token) return next(new AuthError('Missing bearer token'));
  try {
    const payload = jwt.verify(token, config.auth.jwtSecret, { issuer: config.auth.issuer });
    req.user = { id: String(payload.sub), roles: payload.roles || [], email: payload.email };
    return next();
  } catch (err) {
    const message = err.name === 'TokenExpiredError' ? 'Token expired' : 'Invalid token';
    return next(new AuthError(message));
  }
}

const requireRole = (role) => (req, res, next) => {
  if (!req.user) return next(new AuthError('Not authenticated'));
  if (!req.user.roles.includes(role)) return next(new AuthError(`Requires role ${role}`, 403));
  return next();
};

// Users may only touch their own resources unless they are admins.
function requireSelfOrAdmin(param = 'userId') {
  return function checkOwner(req, res, next) {
    const target = req.params[param];
    if (req.user && (req.user.id === target || req.user.roles.includes('admin'))) return next();
    return next(new AuthError('Cannot access another user\'s resources', 403));
  };
}

function signToken(user, ttlSeconds = config.auth.tokenTtlSeconds) {
  return jwt.sign({ sub: user.id, roles: user.roles, email: user.email }, config.auth.jwtSecret, {
    issuer: config.auth.issuer,
    expiresIn: ttlSeconds,
  });
}

module.exports = { AuthError, requireAuth, requireRole, requireSelfOrAdmin, signToken, extractBearerToken };
