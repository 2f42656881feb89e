/** The cook report: data (buildCookReport), page (renderReportHtml), files (writeCookReport). */
export { buildCookReport, REPORT_ASSET_LIMIT, REPORT_VERSION, type CookReport, type ReportAsset, type ReportFolder, type ReportInput, type ReportReference } from './buildCookReport.js';
export { renderReportHtml } from './renderReportHtml.js';
export { reportFiles, writeCookReport, type ReportFiles } from './writeCookReport.js';
