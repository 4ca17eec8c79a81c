def s = DFNF ;
  try(parallel @ outermost(isMap)) ;;
  lowerToC
