module.exports = { poweredByHeader: false };
