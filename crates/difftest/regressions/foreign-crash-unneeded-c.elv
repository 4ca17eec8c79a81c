def s = DFNF ;
  try(interchange(0) @ outermost(isMap)) ;;
  try(parallel @ innermost(isMap)) ;;
  lowerToC
